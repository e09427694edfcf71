package main

import (
	"fmt"
	"os"
	"time"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartv2util "helm.sh/helm/v4/pkg/chart/v2/util"
)

// packageChart does what `SOURCE_DATE_EPOCH=epoch helm package DIR -d OUT`
// does: every file of the archive gets the time epoch rather than its
// modification time on disk, which a checkout sets to the time of the
// clone, so that two packages of one commit are the same bytes.
func packageChart(dir, out string, epoch int64) (string, error) {
	ch, err := loader.LoadDir(dir)
	if err != nil {
		return "", fmt.Errorf("failed to load the chart in %s: %w", dir, err)
	}
	if err := ch.Validate(); err != nil {
		return "", fmt.Errorf("chart %s is invalid: %w", dir, err)
	}
	ch.StampModTimes(time.Unix(epoch, 0))
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	path, err := chartv2util.Save(ch, out)
	if err != nil {
		return "", fmt.Errorf("failed to package chart %s: %w", dir, err)
	}
	return path, nil
}
