// Helpers for names that end up on disk.

export function sanitizeName(name: string): string {
  // Drop a leading parent reference.
  return name.replace("../", "");
}

export function extensionOf(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot < 0 ? "" : name.slice(dot + 1);
}
