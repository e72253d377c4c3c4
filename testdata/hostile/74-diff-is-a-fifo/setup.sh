mkfifo pipe.diff
