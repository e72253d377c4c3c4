{ text 6000000; echo; } > big.txt
n=$(wc -l < big.txt)
{ printf "diff --git a/big.txt b/big.txt\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,%d @@\n" "$n"; sed "s/^/+/" big.txt; cat ok.diff; } > change.diff
