/*
Copyright The nginx-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controller

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
	"github.com/example/nginx-operator/pkg/controller"
	"github.com/example/nginx-operator/pkg/controller/builders"
)

// NewManager builds a manager running the NginxOperator controller, its metrics and
// health probes; /readyz turns ready once the informer caches have synced.
func NewManager(cfg *rest.Config, opts *Options) (manager.Manager, error) {
	leaseDuration := opts.LeaseDuration
	mgr, err := ctrl.NewManager(withProtobuf(cfg), ctrl.Options{
		Scheme:                  controller.NewScheme(),
		Cache:                   cacheOptions(opts),
		Metrics:                 metricsOptions(opts),
		HealthProbeBindAddress:  opts.ProbeAddr,
		PprofBindAddress:        opts.PprofAddr,
		LeaderElection:          opts.LeaderElect,
		LeaderElectionID:        opts.LeaderElectionID,
		LeaderElectionNamespace: opts.LeaderElectionNamespace,
		LeaseDuration:           &leaseDuration,
	})
	if err != nil {
		return nil, err
	}
	applier, err := newApplier(cfg, mgr.GetScheme(), mgr.GetRESTMapper())
	if err != nil {
		return nil, err
	}
	image, err := exporterImage(context.Background(), mgr.GetAPIReader(), opts.ExporterImage)
	if err != nil {
		return nil, err
	}
	mgr.GetLogger().Info("nginx pods with spec.metrics on run the exporter", "image", image)
	r := &controller.Reconciler{Client: mgr.GetClient(), Applier: applier, APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("nginx-operator"), Clock: clock.RealClock{},
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles, MaxRetryDelay: opts.MaxRetryDelay, ExporterImage: image}
	if err := r.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	if err := controller.RegisterMetrics(mgr.GetCache(), mgr.Elected()); err != nil {
		return nil, err
	}
	synced := &cacheSynced{cache: mgr.GetCache()}
	if err := mgr.Add(synced); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("ping", func(*http.Request) error { return nil }); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("informers-synced", synced.check); err != nil {
		return nil, err
	}
	return mgr, nil
}

// cacheOptions says what the informers list and watch. With --namespaces, every kind
// (NginxOperators, the children, pods, and ConfigMap and Secret metadata) is listed and
// watched in those namespaces only: nothing elsewhere is cached, so nothing elsewhere
// enqueues a reconcile, and a cached read of another namespace fails instead of listing it.
func cacheOptions(opts *Options) cache.Options {
	// Only the Deployments and Services the controller applied are cached and watched;
	// a same-named stranger is read from the API server when it matters (getOwned).
	managed := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{builders.ManagedByLabel: builders.FieldManager})}
	o := cache.Options{ByObject: map[client.Object]cache.ByObject{
		&appsv1.Deployment{}:            managed,
		&corev1.Service{}:               managed,
		&policyv1.PodDisruptionBudget{}: managed,
		// The nginx pods carry the label through the pod template; no other pod is cached.
		// Their status is read, and in Reload mode the content annotation the controller
		// writes; their managed fields (a third of a pod) and other annotations are not
		// kept. The Deployments' and Services' are, to compare what the controller owns.
		&corev1.Pod{}: {Label: managed.Label, Transform: keepContentAnnotation},
		// Of ConfigMaps and Secrets only metadata is cached, without managed fields and
		// annotations: enough to notice a change to one an NginxOperator mounts, and to
		// tell which are its own. Anyone may put 256 KiB of annotations on any of them.
		// Their content is never cached: the reconciler reads exactly the objects an
		// NginxOperator mounts from the API server, when their resourceVersion changed.
		metadataOf("ConfigMap"): {Transform: dropUnread},
		metadataOf("Secret"):    {Transform: dropUnread},
	}}
	if namespaces := opts.watchedNamespaces(); len(namespaces) > 0 {
		// ByObject entries without Namespaces of their own inherit these.
		o.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			o.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return o
}

// metricsOptions serves /metrics on opts.MetricsAddr, over HTTPS with authentication and
// authorization delegated to kube-apiserver when opts.MetricsSecure is set.
func metricsOptions(opts *Options) metricsserver.Options {
	if !opts.MetricsSecure {
		return metricsserver.Options{BindAddress: opts.MetricsAddr}
	}
	return metricsserver.Options{
		BindAddress:    opts.MetricsAddr,
		SecureServing:  true,
		CertDir:        opts.MetricsCertDir,
		FilterProvider: metricsAuth,
	}
}

// dropUnread is the cache transform of the kinds whose managed fields and annotations the
// controller never reads.
func dropUnread(obj any) (any, error) {
	if o, err := meta.Accessor(obj); err == nil {
		o.SetManagedFields(nil)
		o.SetAnnotations(nil)
	}
	return obj, nil
}

// keepContentAnnotation is dropUnread for pods, keeping the one annotation the controller
// reads of them (reload.ContentHashesAnnotation).
func keepContentAnnotation(obj any) (any, error) {
	o, err := meta.Accessor(obj)
	if err != nil {
		return obj, nil
	}
	value, found := o.GetAnnotations()[reload.ContentHashesAnnotation]
	if _, err := dropUnread(obj); err != nil {
		return nil, err
	}
	if found {
		o.SetAnnotations(map[string]string{reload.ContentHashesAnnotation: value})
	}
	return obj, nil
}

func metadataOf(kind string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
	return m
}

// newApplier is the client of server-side applies. controller-runtime decodes an
// apply's response as JSON only and fails on a protobuf one (after the server has
// applied), so this client asks for JSON whatever the manager's clients ask for.
// A nil mapper makes the client discover its own.
func newApplier(cfg *rest.Config, scheme *runtime.Scheme, mapper meta.RESTMapper) (client.Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType, cfg.AcceptContentTypes = runtime.ContentTypeJSON, runtime.ContentTypeJSON
	return client.New(cfg, client.Options{Scheme: scheme, Mapper: mapper})
}

// cacheSynced records when the informer caches have synced. It runs on every replica,
// not only the leader, so standby replicas report ready too.
type cacheSynced struct {
	cache interface {
		WaitForCacheSync(ctx context.Context) bool
	}
	done atomic.Bool
}

func (c *cacheSynced) Start(ctx context.Context) error {
	if c.cache.WaitForCacheSync(ctx) {
		c.done.Store(true)
	}
	<-ctx.Done()
	return nil
}

func (c *cacheSynced) NeedLeaderElection() bool { return false }

func (c *cacheSynced) check(*http.Request) error {
	if !c.done.Load() {
		return errors.New("informer caches have not synced yet")
	}
	return nil
}
