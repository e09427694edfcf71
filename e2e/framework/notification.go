package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// notificationAPIVersion is the API version notification-controller v1.9
// serves Alerts and Providers in.
const notificationAPIVersion = "notification.toolkit.fluxcd.io/v1beta3"

// EventReceiver is the HTTP endpoint of a `generic` Provider, on
// 127.0.0.1: it records every event notification-controller forwards, as
// a webhook a user points an Alert at would receive it.
type EventReceiver struct {
	// URL is the Provider's address.
	URL    string
	srv    *httptest.Server
	mu     sync.Mutex
	events []eventv1.Event
}

// StartEventReceiver starts a receiver; Close stops it.
func StartEventReceiver() *EventReceiver {
	r := &EventReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = r.srv.URL + "/"
	return r
}

// serve records a POSTed event. A body that is not an event is refused, so
// that notification-controller logs the failure the test then shows.
func (r *EventReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil || req.Method != http.MethodPost {
		http.Error(w, "POST an event", http.StatusBadRequest)
		return
	}
	var e eventv1.Event
	if err := json.Unmarshal(body, &e); err != nil {
		http.Error(w, "not an event: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

// Events returns the events received so far.
func (r *EventReceiver) Events() []eventv1.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]eventv1.Event(nil), r.events...)
}

// Close stops the receiver. It is safe to call on nil.
func (r *EventReceiver) Close() {
	if r != nil {
		r.srv.Close()
	}
}

// CreateAlert creates, in namespace, a `generic` Provider that POSTs to
// address and an Alert named name that sends it every event (info and
// above) about the namespace's HelmReleases, as a user would alert on
// helm-controller.
func CreateAlert(ctx context.Context, c client.Client, namespace, name, address string) error {
	provider := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": notificationAPIVersion, "kind": "Provider",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec":     map[string]any{"type": "generic", "address": address},
	}}
	alert := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": notificationAPIVersion, "kind": "Alert",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"providerRef":   map[string]any{"name": name},
			"eventSeverity": "info",
			"eventSources":  []any{map[string]any{"kind": "HelmRelease", "name": "*"}},
		},
	}}
	for _, o := range []client.Object{provider, alert} {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("failed to create %s %s/%s: %w", o.GetObjectKind().GroupVersionKind().Kind, namespace, name, err)
		}
	}
	return nil
}
