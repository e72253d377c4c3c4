repo
printf "package ok\n\nfunc Div(a, b int) int {\n\treturn a / b // BUG: b may be zero\n}\n" > ok.go
commit
