repo
printf "#!/bin/sh\necho hi\n" > run.sh
commit base2
git tag -f base >/dev/null
chmod +x run.sh
printf "package ok\n\nfunc Div(a, b int) int {\n\treturn a / b // BUG: b may be zero\n}\n" > ok.go
commit
