package main

import (
	"context"
	"fmt"
	"io"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// push uploads the layout's index, both images and their blobs to image
// (registry/repository:tag), as `crane push --index` does, with the
// credentials of the Docker config (~/.docker/config.json, $DOCKER_CONFIG)
// and its credential helpers. Blobs the registry already has are not sent
// again. As in crane, a registry on localhost, a loopback or private address
// or a .local name may be spoken to over plain HTTP.
func push(ctx context.Context, layoutDir, image string, w io.Writer, opts ...remote.Option) error {
	idx, desc, err := readIndex(layoutDir)
	if err != nil {
		return err
	}
	ref, err := name.ParseReference(image)
	if err != nil {
		return fmt.Errorf("failed to parse the image reference %q: %w", image, err)
	}
	opts = append([]remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}, opts...)
	if err := remote.WriteIndex(ref, idx, opts...); err != nil {
		return fmt.Errorf("failed to push %s: %w", ref, err)
	}
	fmt.Fprintf(w, "pushed %s (%s@%s)\n", ref, ref.Context(), desc.Digest)
	return nil
}
