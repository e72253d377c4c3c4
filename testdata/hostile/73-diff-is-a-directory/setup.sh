mkdir -p patches
