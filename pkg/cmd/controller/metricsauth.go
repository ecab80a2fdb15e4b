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
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// reviewRetryBackoff is the generic apiserver's default for its delegated token and access
// reviews (options.DefaultAuthWebhookRetryBackoff, not imported for the weight of its package).
func reviewRetryBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
}

// metricsAuth is a metrics server filter that delegates authentication (TokenReview) and
// authorization (SubjectAccessReview of get on the request path) to kube-apiserver, as
// controller-runtime's filters.WithAuthenticationAndAuthorization does, with the caching and
// retries of the generic apiserver's delegated options. It differs in one answer: a token
// kube-apiserver does not accept is 401 Unauthorized, as kube-apiserver and every generic
// apiserver answer it, where controller-runtime's filter answers 500.
func metricsAuth(cfg *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authentication, err := authenticationv1.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	authorization, err := authorizationv1.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	authenticator, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: false},
		CacheTTL:                 time.Minute,
		TokenAccessReviewClient:  authentication,
		TokenAccessReviewTimeout: 10 * time.Second,
		WebhookRetryBackoff:      reviewRetryBackoff(),
	}.New()
	if err != nil {
		return nil, fmt.Errorf("metrics authentication: %w", err)
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: authorization,
		AllowCacheTTL:             5 * time.Minute,
		DenyCacheTTL:              30 * time.Second,
		WebhookRetryBackoff:       reviewRetryBackoff(),
	}.New()
	if err != nil {
		return nil, fmt.Errorf("metrics authorization: %w", err)
	}
	return func(log logr.Logger, handler http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			// An error is a token kube-apiserver rejected (or could not review): the client
			// is not authenticated either way.
			res, ok, err := authenticator.AuthenticateRequest(req)
			if err != nil || !ok {
				log.V(4).Info("metrics request not authenticated", "error", err)
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			attributes := authorizer.AttributesRecord{User: res.User, Verb: strings.ToLower(req.Method), Path: req.URL.Path}
			decision, reason, err := authz.Authorize(req.Context(), attributes)
			if err != nil {
				// kube-apiserver could not answer: the client may retry.
				log.Error(err, "metrics authorization failed", "user", res.User.GetName())
				http.Error(w, "authorization check failed", http.StatusServiceUnavailable)
				return
			}
			if decision != authorizer.DecisionAllow {
				log.V(4).Info("metrics request forbidden", "user", res.User.GetName(), "reason", reason)
				http.Error(w, fmt.Sprintf("user %q may not %s %s", res.User.GetName(), attributes.Verb, attributes.Path), http.StatusForbidden)
				return
			}
			handler.ServeHTTP(w, req)
		}), nil
	}, nil
}
