repo
printf "GIF89a\0\0\1\2" > pic.gif
printf "package ok\n\nfunc Div(a, b int) int {\n\treturn a / b // BUG: b may be zero\n}\n" > ok.go
commit
