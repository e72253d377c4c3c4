# 15 names of 250 hexadecimal digits: 3,769 bytes (with x.go) that do not compress,
# within file system limits but beyond what a Postgres index entry holds.
long=$(hexdirs 15 250)
{ printf "diff --git a/%sx.go b/%sx.go\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/%sx.go\n@@ -0,0 +1 @@\n+package deep\n" "$long" "$long" "$long"; cat ok.diff; } > change.diff
