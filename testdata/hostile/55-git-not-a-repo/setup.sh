mkdir -p repo
