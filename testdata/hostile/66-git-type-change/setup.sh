repo
printf "package t\n" > t.go
commit base2
git tag -f base >/dev/null
rm t.go
ln -s README.md t.go
printf "package ok\n\nfunc Div(a, b int) int {\n\treturn a / b // BUG: b may be zero\n}\n" > ok.go
commit
