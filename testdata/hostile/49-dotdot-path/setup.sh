mkdir -p tree
