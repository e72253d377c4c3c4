repo
printf "package ok\n\nfunc Div(a, b int) int {\n\treturn a / b // BUG: b may be zero\n}\n" > ok.go
git add ok.go
git update-index --add --cacheinfo 160000,5a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d,lib/sub
git commit -qm head
git tag head
