repo
git commit -q --allow-empty -m empty
git tag -f head >/dev/null
