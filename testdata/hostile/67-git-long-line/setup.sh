repo
head -c 300000 /dev/zero | tr "\0" "y" > min.txt
printf "package ok\n\nfunc Div(a, b int) int {\n\treturn a / b // BUG: b may be zero\n}\n" > ok.go
commit
