# 8 names of 250 hexadecimal digits: 2,008 bytes that do not compress,
# just within the limit.
long=$(hexdirs 8 250)
{ printf "diff --git a/%sx.go b/%sx.go\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/%sx.go\n@@ -0,0 +1,2 @@\n+package deep\n+var x = 1 // BUG: deep\n" "$long" "$long" "$long"; cat ok.diff; } > change.diff
