mkdir -p tree && printf "package x\nvar b = 2\n" > tree/x.go
