repo
printf 'package nl\nvar x = 1 // BUG: newline\n' > "$(printf 'new\nline.go')"
printf 'package ok\n' > ok.go
commit
