repo
printf "package win\r\n\r\nvar x = 1 / 1 // BUG: none\r\n" > win.go
commit
