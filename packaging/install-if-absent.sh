#!/bin/sh
# meson install script: install-if-absent.sh SRC DEST
# Copies SRC to $DESTDIR/DEST (mode 0644) unless that file exists already, so
# a reinstall keeps the operator's edited configuration.
set -eu
dest="${DESTDIR:-}$2"
if [ -e "$dest" ]; then
	echo "Keeping existing $dest"
	exit 0
fi
install -D -m 0644 "$1" "$dest"
echo "Installing $1 to $dest"
