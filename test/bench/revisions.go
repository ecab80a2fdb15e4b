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

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/generated/clientset/versioned"
	"github.com/example/nginx-operator/pkg/generated/clientset/versioned/scheme"
)

// RevisionsRun is what revisions cost: N NginxOperators with an inline nginx.conf, each
// written Each times with new content (Each revisions, all kept under the default
// limit), on our apiserver directly in protobuf. A CRD has no revisions to compare with,
// so the figures are ratios to the same operations without revisions in the same run.
type RevisionsRun struct {
	N        int       `json:"n"`
	Each     int       `json:"each"`
	Command  string    `json:"command"`
	Started  time.Time `json:"started"`
	Duration string    `json:"duration"`
	// ContentUpdatesPerSecond record a revision each; PlainUpdatesPerSecond (a replica
	// count) do not: the same clients, one after the other.
	ContentUpdatesPerSecond float64 `json:"contentUpdatesPerSecond"`
	PlainUpdatesPerSecond   float64 `json:"plainUpdatesPerSecond"`
	// EtcdFileBefore and EtcdFileAfter are etcd's database file with one revision per
	// object and with Each.
	EtcdFileBefore float64 `json:"etcdFileBefore"`
	EtcdFileAfter  float64 `json:"etcdFileAfter"`
	// RevisionBytes is the protobuf size of every revision, as listed.
	RevisionBytes int64 `json:"revisionBytes"`
	Revisions     int   `json:"revisions"`
	// ListBefore and ListAfter are LIST of the N NginxOperators (p50, ms) before the
	// content updates and after them.
	ListBefore Spread `json:"listBeforeMs"`
	ListAfter  Spread `json:"listAfterMs"`
	// HistoryP50 and HistoryP99 are one object's revisions listed by label, as
	// "kubectl nginx history" does, in ms.
	HistoryP50 float64 `json:"historyP50Ms"`
	HistoryP99 float64 `json:"historyP99Ms"`
	// ListRevisions is a LIST of every revision in the namespace (p50, ms).
	ListRevisions Spread `json:"listRevisionsMs"`
	Error         string `json:"error,omitempty"`
}

const revisionsNamespace = "bench-revisions"

func revisionConfig(i, rev int) *v1alpha2.ConfigSource {
	return &v1alpha2.ConfigSource{Inline: fmt.Sprintf("events {}\nhttp {\n  server {\n    listen 8080;\n    location / { return 200 'object %d, revision %d'; }\n    location /healthz { return 204; }\n  }\n}\n", i, rev)}
}

// runRevisions measures RevisionsRun on a stack of its own.
func runRevisions(ctx context.Context, o *options, root string, versions map[string]string, logf func(string, ...any)) (*RevisionsRun, error) {
	run := &RevisionsRun{N: o.revisionsN, Each: o.revisionsEach, Command: o.command, Started: time.Now().UTC()}
	err := measureRevisions(ctx, o, root, run, versions, logf)
	run.Duration = time.Since(run.Started).Round(time.Second).String()
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		run.Error = err.Error()
		logf("revisions failed: %v", err)
	}
	return run, nil
}

func measureRevisions(ctx context.Context, o *options, root string, run *RevisionsRun, serverVersions map[string]string, logf func(string, ...any)) error {
	stack, stop, err := startStack(root, stackSettings(false), "revisions", serverVersions, logf)
	if err != nil {
		return err
	}
	defer stop()
	kubeHost := fmt.Sprintf("https://127.0.0.1:%d", stack.Ports["KUBE_APISERVER_PORT"])
	operatorHost := fmt.Sprintf("https://127.0.0.1:%d", stack.Ports["OPERATOR_APISERVER_PORT"])
	kube, err := kubernetes.NewForConfig(adminConfig(stack.LocalDir, kubeHost, "ca.crt"))
	if err != nil {
		return err
	}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: revisionsNamespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	cfg := adminConfig(stack.LocalDir, operatorHost, "nginx-operator-ca.crt")
	cfg.ContentType, cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf"
	cfg.QPS, cfg.Burst = -1, 0
	cs, err := versioned.NewForConfig(cfg)
	if err != nil {
		return err
	}
	api := cs.OperatorV1alpha2()
	objects, revisions := api.NginxOperators(revisionsNamespace), api.NginxOperatorRevisions(revisionsNamespace)
	resources, err := newResources(stack.LocalDir, nil)
	if err != nil {
		return err
	}

	logf("revisions: creating %d NginxOperators with an inline nginx.conf", run.N)
	if _, err := parallel(ctx, o.clients, run.N, func(ctx context.Context, i int) error {
		_, err := objects.Create(ctx, &v1alpha2.NginxOperator{
			ObjectMeta: metav1.ObjectMeta{Name: objectName(i)},
			Spec:       v1alpha2.NginxOperatorSpec{Replicas: ptr.To[int32](1), Config: revisionConfig(i, 1)},
		}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	if run.EtcdFileBefore, err = resources.EtcdDBBytes(); err != nil {
		return err
	}
	listAll := func() (time.Duration, error) {
		return timed(func() error {
			_, err := objects.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			return err
		})
	}
	if run.ListBefore, err = spreadOf(o.rounds*2, listAll); err != nil {
		return err
	}

	// The same number of plain updates and of content updates, one after the other.
	plain := min(run.N, 5000)
	logf("revisions: %d replica updates (no revision), then %d content updates (one revision each)", plain, run.N*(run.Each-1))
	took, err := parallel(ctx, o.clients, plain, func(ctx context.Context, i int) error {
		_, err := objects.Patch(ctx, objectName(i), types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{})
		return err
	})
	if err != nil {
		return err
	}
	run.PlainUpdatesPerSecond = float64(plain) / took.Seconds()
	writes := run.N * (run.Each - 1)
	took, err = parallel(ctx, o.clients, writes, func(ctx context.Context, j int) error {
		i, rev := j%run.N, 2+j/run.N
		patch := fmt.Sprintf(`{"spec":{"config":{"inline":%q}}}`, revisionConfig(i, rev).Inline)
		_, err := objects.Patch(ctx, objectName(i), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	})
	if err != nil {
		return err
	}
	run.ContentUpdatesPerSecond = float64(writes) / took.Seconds()
	if run.EtcdFileAfter, err = resources.EtcdDBBytes(); err != nil {
		return err
	}
	if run.ListAfter, err = spreadOf(o.rounds*2, listAll); err != nil {
		return err
	}

	logf("revisions: one object's history by label, and every revision")
	var history []time.Duration
	for range 300 {
		name := objectName(rand.IntN(run.N))
		d, err := timed(func() error {
			list, err := revisions.List(ctx, metav1.ListOptions{LabelSelector: "operator.example.com/nginxoperator=" + name, ResourceVersion: "0"})
			if err == nil && len(list.Items) != run.Each {
				err = fmt.Errorf("%s has %d revisions, want %d", name, len(list.Items), run.Each)
			}
			return err
		})
		if err != nil {
			return err
		}
		history = append(history, d)
	}
	sort.Slice(history, func(i, j int) bool { return history[i] < history[j] })
	run.HistoryP50, run.HistoryP99 = Percentile(history, 50), Percentile(history, 99)
	if run.ListRevisions, err = spreadOf(o.rounds, func() (time.Duration, error) {
		return timed(func() error {
			_, err := revisions.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			return err
		})
	}); err != nil {
		return err
	}
	raw, err := rawList(ctx, cfg, "/apis/operator.example.com/v1alpha2/namespaces/"+revisionsNamespace+"/nginxoperatorrevisions")
	if err != nil {
		return err
	}
	run.RevisionBytes = int64(len(raw))
	list, err := revisions.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return err
	}
	run.Revisions = len(list.Items)
	logf("revisions: %d revisions; %.0f content and %.0f plain updates/s; etcd file %.0f → %.0f MiB; LIST of %d objects p50 %.1f → %.1f ms; history p50 %.2f ms",
		run.Revisions, run.ContentUpdatesPerSecond, run.PlainUpdatesPerSecond, run.EtcdFileBefore/(1<<20), run.EtcdFileAfter/(1<<20),
		run.N, run.ListBefore.Median, run.ListAfter.Median, run.HistoryP50)
	return nil
}

// parallel runs job for 0..n-1 on workers and returns how long all took.
func parallel(ctx context.Context, workers, n int, job func(ctx context.Context, i int) error) (time.Duration, error) {
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := job(ctx, i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start), first
}

// spreadOf runs fn rounds times and returns the milliseconds' spread.
func spreadOf(rounds int, fn func() (time.Duration, error)) (Spread, error) {
	var ms []float64
	for range rounds {
		d, err := fn()
		if err != nil {
			return Spread{}, err
		}
		ms = append(ms, float64(d.Microseconds())/1000)
	}
	return SpreadOf(ms), nil
}

// rawList is the body of a protobuf LIST of path.
func rawList(ctx context.Context, cfg *rest.Config, path string) ([]byte, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.GroupVersion = &v1alpha2.SchemeGroupVersion
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	c, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return c.Get().AbsPath(path).Param("resourceVersion", "0").SetHeader("Accept", "application/vnd.kubernetes.protobuf").DoRaw(ctx)
}

// Markdown is the report's section.
func (r *RevisionsRun) Markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("## Revisions\n\n")
	w("`%s` on %s in %s, on a private stack of its own: %d NginxOperators with an inline nginx.conf (about 150 bytes), each written with new content until it has %d revisions (all kept under the default `revisionHistoryLimit`), on our apiserver directly in protobuf with %d clients. A CRD has no revisions, so the figures compare the same server with and without them.\n\n",
		r.Command, r.Started.Format("2006-01-02 15:04 MST"), r.Duration, r.N, r.Each, 16)
	if r.Error != "" {
		w("The run failed: %s\n", r.Error)
		return b.String()
	}
	w("| measure | without revisions | with revisions | ratio |\n|---|---|---|---|\n")
	w("| updates/s (a replica count, no revision, against new content, one revision each) | %.0f | %.0f | %.2fx |\n",
		r.PlainUpdatesPerSecond, r.ContentUpdatesPerSecond, Ratio(r.ContentUpdatesPerSecond, r.PlainUpdatesPerSecond))
	w("| etcd database file, not defragmented (1 revision per object, against %d; the file also keeps every write's old versions until compaction) | %.1f MiB | %.1f MiB | %.2fx |\n",
		r.Each, r.EtcdFileBefore/(1<<20), r.EtcdFileAfter/(1<<20), Ratio(r.EtcdFileAfter, r.EtcdFileBefore))
	w("| LIST of the %d NginxOperators, p50 (before the revisions were written, after) | %.1f ms %s | %.1f ms %s | %.2fx |\n\n",
		r.N, r.ListBefore.Median, spreadRange(r.ListBefore), r.ListAfter.Median, spreadRange(r.ListAfter), Ratio(r.ListAfter.Median, r.ListBefore.Median))
	w("- %d revisions take %.1f MiB as protobuf, %.0f bytes each (etcd's file also holds the history of every write until compaction).\n",
		r.Revisions, float64(r.RevisionBytes)/(1<<20), float64(r.RevisionBytes)/float64(max(r.Revisions, 1)))
	w("- One object's history (`kubectl nginx history`: its revisions by label, from the watch cache's label index): p50 %.2f ms, p99 %.2f ms.\n", r.HistoryP50, r.HistoryP99)
	w("- LIST of all %d revisions of the namespace: p50 %.0f ms %s.\n", r.Revisions, r.ListRevisions.Median, spreadRange(r.ListRevisions))
	return b.String()
}

func spreadRange(s Spread) string {
	return fmt.Sprintf("[%.1f–%.1f]", s.Min, s.Max)
}
