# 60 directories of 100 digits each: 6,000 bytes, every name short.
long=$(repeatdirs 60 "$(seq -s "" 1 55 | head -c 100)")
{ printf "diff --git a/%sx.go b/%sx.go\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/%sx.go\n@@ -0,0 +1 @@\n+package deep\n" "$long" "$long" "$long"; cat ok.diff; } > change.diff
