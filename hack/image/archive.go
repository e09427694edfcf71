package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// archiveOptions says what `archive` writes: files under their names, or
// a directory's tree, as a tar (gzipped or not) whose bytes depend only on
// the contents and the epoch, as the image's layer does.
type archiveOptions struct {
	out   string
	epoch int64
	gzip  bool
	dir   string   // a tree to archive, relative names
	files []string // NAME=PATH
	links []string // NAME=TARGET, symbolic links
}

// writeArchive writes o.out.
func writeArchive(o archiveOptions) error {
	var entries []entry
	var err error
	if o.dir != "" {
		entries, err = treeEntries(o.dir)
	} else {
		entries, err = fileEntries(o.files, o.links)
	}
	if err != nil {
		return err
	}
	data, err := layerTar(entries, time.Unix(o.epoch, 0).UTC())
	if err != nil {
		return err
	}
	if o.gzip {
		if data, err = gzipped(data); err != nil {
			return err
		}
	}
	return os.WriteFile(o.out, data, 0o644)
}

// fileEntries reads NAME=PATH files, and adds NAME=TARGET links; an
// executable file keeps mode 0755, any other gets 0644.
func fileEntries(files, links []string) ([]entry, error) {
	var entries []entry
	for _, f := range files {
		name, path, ok := strings.Cut(f, "=")
		if !ok || name == "" || path == "" {
			return nil, fmt.Errorf("want NAME=PATH, got %q", f)
		}
		e, err := fileEntry(name, path)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	for _, l := range links {
		name, target, ok := strings.Cut(l, "=")
		if !ok || name == "" || target == "" {
			return nil, fmt.Errorf("want NAME=TARGET, got %q", l)
		}
		entries = append(entries, entry{name: name, mode: 0o777, link: target})
	}
	return entries, nil
}

// fileEntry reads one file.
func fileEntry(name, path string) (entry, error) {
	info, err := os.Stat(path)
	if err != nil {
		return entry{}, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return entry{}, err
	}
	mode := int64(0o644)
	if info.Mode()&0o111 != 0 {
		mode = 0o755
	}
	return entry{name: name, mode: mode, data: data}, nil
}

// treeEntries reads the tree under dir, parents before children, in name
// order (filepath.WalkDir's).
func treeEntries(dir string) ([]entry, error) {
	var entries []entry
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		name, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		name = filepath.ToSlash(name)
		switch {
		case d.IsDir():
			entries = append(entries, entry{name: name + "/", mode: 0o755})
		case d.Type().IsRegular():
			e, err := fileEntry(name, path)
			if err != nil {
				return err
			}
			entries = append(entries, e)
		default:
			return fmt.Errorf("%s is neither a file nor a directory", path)
		}
		return nil
	})
	return entries, err
}

// writeSums writes SHA256SUMS for every file of dir but out itself, in
// name order, in the format `sha256sum -c` reads.
func writeSums(dir, out string) error {
	names, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	for _, n := range names {
		if n.IsDir() || n.Name() == filepath.Base(out) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, n.Name()))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), n.Name())
	}
	return os.WriteFile(out, b.Bytes(), 0o644)
}
