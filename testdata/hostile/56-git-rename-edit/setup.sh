repo
printf "package x\n\nvar a = 1\nvar b = 2\nvar c = 3\nvar d = 4\n" > old.go
commit base2
git tag -f base >/dev/null
git mv old.go new.go
sed -i "s/var a = 1/var a = 10 \/\/ BUG: changed/" new.go
commit
