#!/bin/sh
# check-format.sh SOURCE_DIR CLANG_FORMAT: lists every tracked C/C++ file clang-format would change.
# Exit 0: all formatted; 1: some are not (named, with the command that fixes them); 77: cannot check.
root=$1
clang_format=$2
if [ -z "$clang_format" ] || ! command -v "$clang_format" >/dev/null 2>&1; then
    echo "skipped: clang-format not found (scripts/debian-packages.txt installs clang-format-19)"
    exit 77
fi
if ! git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "skipped: $root is not a git checkout (the tracked files are the ones checked)"
    exit 77
fi
unformatted=""
for file in $(git -C "$root" ls-files '*.c' '*.h' '*.cpp' '*.hpp'); do
    if ! "$clang_format" --dry-run -Werror "$root/$file" >/dev/null 2>&1; then
        unformatted="$unformatted $file"
    fi
done
if [ -n "$unformatted" ]; then
    echo "not formatted with $root/.clang-format:"
    for file in $unformatted; do echo "  $file"; done
    echo "fix: (cd $root && $clang_format -i$unformatted)"
    exit 1
fi
echo "all tracked C/C++ files are formatted"
