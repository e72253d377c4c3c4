# One name of 9,000 bytes: longer than any file system allows.
long=$(head -c 9000 /dev/zero | tr "\0" "d")
{ printf "diff --git a/%s.go b/%s.go\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/%s.go\n@@ -0,0 +1 @@\n+package long\n" "$long" "$long" "$long"; cat ok.diff; } > change.diff
