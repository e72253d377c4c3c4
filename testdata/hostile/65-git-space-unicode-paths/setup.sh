repo
mkdir -p "my dir" "données"
printf "package a\nvar x = 1 // BUG: spaced\n" > "my dir/a b.go"
printf "package d\nvar y = 2 // BUG: accented\n" > "données/été.go"
commit
