package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/registry"
)

// pushOptions says what push-chart pushes where.
type pushOptions struct {
	chart, repository string
	plainHTTP         bool
	epoch             int64
}

// pushChart does what `helm push CHART oci://REPOSITORY` does, with the
// manifest's created annotation set to the epoch rather than the time of
// the push, and returns the reference and the manifest's digest. The
// registry's credentials are Helm's, then the Docker config's, as for
// `helm push`.
func pushChart(o pushOptions) (ref, digest string, err error) {
	data, err := os.ReadFile(o.chart)
	if err != nil {
		return "", "", err
	}
	ch, err := loader.LoadArchive(strings.NewReader(string(data)))
	if err != nil {
		return "", "", fmt.Errorf("failed to read the chart %s: %w", o.chart, err)
	}
	opts := []registry.ClientOption{registry.ClientOptWriter(os.Stderr)}
	if o.plainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	client, err := registry.NewClient(opts...)
	if err != nil {
		return "", "", fmt.Errorf("failed to create the registry client: %w", err)
	}
	ref = fmt.Sprintf("%s/%s:%s", strings.TrimPrefix(strings.TrimSuffix(o.repository, "/"), "oci://"),
		ch.Metadata.Name, ch.Metadata.Version)
	res, err := client.Push(data, ref,
		registry.PushOptCreationTime(time.Unix(o.epoch, 0).UTC().Format(time.RFC3339)))
	if err != nil {
		return "", "", fmt.Errorf("failed to push %s to %s: %w", o.chart, ref, err)
	}
	return res.Ref, res.Manifest.Digest, nil
}
