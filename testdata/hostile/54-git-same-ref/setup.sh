repo
