repo
mkdir -p "my dir" "données"
printf "package a\nvar x = 1\n" > "my dir/a b.go"
printf "package d\nvar y = 2\n" > "données/été.go"
commit
