repo
printf "package gone\n" > gone.go
commit base2
git tag -f base >/dev/null
git rm -q gone.go
printf "package ok\n\nfunc Div(a, b int) int {\n\treturn a / b // BUG: b may be zero\n}\n" > ok.go
commit
