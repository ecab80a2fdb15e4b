#!/usr/bin/env bash
# Creates the certificates of the nginx-operator aggregated API server and its etcd, and wires
# them up:
#   1. a CA and a serving certificate for the apiserver Service's DNS names (openssl),
#   2. the Secret nginx-operator-apiserver-tls in nginx-operator-system,
#   3. spec.caBundle of both APIServices, so the kube-aggregator verifies that certificate,
#      and from the same CA the controller's metrics serving certificate for its Service's
#      names (Secret nginx-operator-controller-metrics-tls; Prometheus verifies it with ca.crt),
#   4. an etcd CA (Secret nginx-operator-etcd-ca, reused on later runs) and from it etcd's
#      serving certificate (nginx-operator-etcd-server-tls), its peer certificate
#      (nginx-operator-etcd-peer-tls) and the apiserver's etcd client certificate
#      (nginx-operator-etcd-client-tls): etcd accepts only clients with a certificate of its CA.
# Run after `kubectl apply -k artifacts/deploy`; uses the cluster of $KUBECONFIG.
# Re-running renews the certificates; the apiserver and etcd read renewed ones without a restart.
#
# Usage: hack/deploy-certs.sh [--print-only] [--etcd-only]
#   --print-only or DRY_RUN=1  only write the files and print the base64 caBundle
#   --etcd-only                only etcd's CA, certificates and Secrets (before an OLM install,
#                              where OLM makes the serving certificate and the APIServices)
#   OUT_DIR=dir                keep the files there (default: a temp dir, removed unless printing only);
#                              an existing ca.crt/ca.key (etcd-ca.crt/etcd-ca.key) there is reused,
#                              so the caBundle (the CA etcd and the apiserver trust) stays valid;
#                              an etcd CA there that differs from Secret nginx-operator-etcd-ca stops the script
#   NAMESPACE                  where nginx-operator runs (default nginx-operator-system; a Helm
#                              release elsewhere)
#   CA_DAYS, CERT_DAYS         validity in days (default 3650 and 365)
#   KUBECTL                    kubectl binary (default: kubectl)
set -euo pipefail

NAMESPACE=${NAMESPACE:-nginx-operator-system}
SERVICE=nginx-operator-apiserver
SECRET=nginx-operator-apiserver-tls
METRICS_SERVICE=nginx-operator-controller
METRICS_SECRET=nginx-operator-controller-metrics-tls
ETCD_SERVICE=nginx-operator-etcd
ETCD_STATEFULSET=nginx-operator-etcd
ETCD_CA_SECRET=nginx-operator-etcd-ca
ETCD_SERVER_SECRET=nginx-operator-etcd-server-tls
ETCD_PEER_SECRET=nginx-operator-etcd-peer-tls
ETCD_CLIENT_SECRET=nginx-operator-etcd-client-tls
APISERVICES=(v1alpha2.operator.example.com v1alpha1.operator.example.com)
KUBECTL=${KUBECTL:-kubectl}
# The field manager of the Secrets' server-side applies.
FIELD_MANAGER=nginx-operator-deploy-certs
CA_DAYS=${CA_DAYS:-3650}
CERT_DAYS=${CERT_DAYS:-365}

dry_run=${DRY_RUN:-0}
etcd_only=0
for arg in "$@"; do
  case $arg in
    --print-only | --dry-run) dry_run=1 ;;
    --etcd-only) etcd_only=1 ;;
    # The comment block at the top, without the shebang and the code after it.
    -h | --help) awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done
[[ $dry_run == 0 || $dry_run == false ]] && dry_run=0 || dry_run=1

command -v openssl >/dev/null || { echo "openssl not found" >&2; exit 1; }
if [[ $dry_run == 0 ]]; then
  command -v "$KUBECTL" >/dev/null || { echo "$KUBECTL not found" >&2; exit 1; }
fi

# Before anything is created: the directory and the keys in it are private.
umask 077
if [[ -n ${OUT_DIR:-} ]]; then
  mkdir -p "$OUT_DIR"
  dir=$OUT_DIR
else
  dir=$(mktemp -d)
  # Private keys should not linger; in print-only mode the files are the point, so keep them.
  [[ $dry_run == 1 ]] || trap 'rm -rf "$dir"' EXIT
fi

# The kube-aggregator dials the Service by its .svc name; .svc.cluster.local for in-cluster clients.
dns1=$SERVICE.$NAMESPACE.svc
dns2=$dns1.cluster.local

metrics_dns=$METRICS_SERVICE.$NAMESPACE.svc

# shellcheck source=hack/lib-certs.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib-certs.sh"
# new_ca NAME CN: NAME.crt and NAME.key, a self-signed CA.
new_ca() { cert_ca "$dir" "$1" "/CN=$2" "$CA_DAYS"; }
# issue NAME CA CN USAGES NAMES: NAME.crt and NAME.key, signed by CA.crt/CA.key.
issue() { cert_issue "$dir" "$2" "$1" "/CN=$3" "$CERT_DAYS" "$4" "$5"; }

# tls_secret NAME CERT CA: applies the kubernetes.io/tls Secret NAME with CERT.crt, CERT.key
# and CA.crt as ca.crt, as cert-manager writes it. Apply rather than create, so a re-run
# replaces the certificate in place. Server-side apply: a client-side apply would copy the
# whole Secret, private key included, into its kubectl.kubernetes.io/last-applied-configuration
# annotation, where what takes care not to show a Secret's data shows it anyway: kubectl
# describe prints annotations, metadata-only caches (the garbage collector's, any metadata
# watch) and logs of object metadata keep them. --force-conflicts takes over the fields an
# earlier client-side apply owned; the annotation such an apply left, with the previous
# key, is removed.
tls_secret() {
  "$KUBECTL" -n "$NAMESPACE" create secret generic "$1" --type=kubernetes.io/tls \
    --from-file=tls.crt="$dir/$2.crt" --from-file=tls.key="$dir/$2.key" --from-file=ca.crt="$dir/$3.crt" \
    --dry-run=client -o yaml |
    "$KUBECTL" apply --server-side --field-manager="$FIELD_MANAGER" --force-conflicts -f -
  "$KUBECTL" -n "$NAMESPACE" annotate secret "$1" kubectl.kubernetes.io/last-applied-configuration- >/dev/null
}

if [[ $etcd_only == 0 ]]; then
  if [[ -s $dir/ca.crt && -s $dir/ca.key ]]; then
    echo "Reusing the CA in $dir" >&2
  else
    new_ca ca "$SERVICE-ca"
  fi
  issue tls ca "$dns1" serverAuth "DNS:$dns1, DNS:$dns2"
  issue metrics-tls ca "$metrics_dns" serverAuth "DNS:$metrics_dns, DNS:$metrics_dns.cluster.local"
fi

# etcd: one CA for its serving, peer and client certificates. etcd and the apiserver load
# the CA once, so it must outlive renewals: reuse the one in OUT_DIR, else the one in the
# cluster (its Secret holds the key, as cert-manager's CA Secret does), else make one.
# Only a Secret that is not there means "no CA": any other failure of kubectl (no access,
# no cluster) stops the script here (set -e) rather than replacing the CA etcd trusts.
cluster_ca=
if [[ $dry_run == 0 ]]; then
  cluster_ca=$("$KUBECTL" -n "$NAMESPACE" get secret "$ETCD_CA_SECRET" --ignore-not-found -o name)
fi
fingerprint() { openssl x509 -noout -fingerprint -sha256 -in "$1"; }
if [[ -s $dir/etcd-ca.crt && -s $dir/etcd-ca.key ]]; then
  if [[ -n $cluster_ca ]]; then
    "$KUBECTL" -n "$NAMESPACE" get secret "$ETCD_CA_SECRET" -o 'jsonpath={.data.tls\.crt}' | openssl base64 -d -A >"$dir/etcd-ca.cluster.crt"
    if [[ $(fingerprint "$dir/etcd-ca.crt") != "$(fingerprint "$dir/etcd-ca.cluster.crt")" ]]; then
      echo "The etcd CA in $dir is not the one in Secret $NAMESPACE/$ETCD_CA_SECRET; etcd trusts the cluster's." >&2
      echo "Remove etcd-ca.crt and etcd-ca.key from $dir to reuse the cluster's CA, or delete the Secret to replace it (then restart etcd and the apiserver)." >&2
      exit 1
    fi
  fi
  echo "Reusing the etcd CA in $dir" >&2
elif [[ -n $cluster_ca ]]; then
  echo "Reusing the etcd CA of Secret $NAMESPACE/$ETCD_CA_SECRET" >&2
  "$KUBECTL" -n "$NAMESPACE" get secret "$ETCD_CA_SECRET" -o 'jsonpath={.data.tls\.crt}' | openssl base64 -d -A >"$dir/etcd-ca.crt"
  "$KUBECTL" -n "$NAMESPACE" get secret "$ETCD_CA_SECRET" -o 'jsonpath={.data.tls\.key}' | openssl base64 -d -A >"$dir/etcd-ca.key"
else
  new_ca etcd-ca "$ETCD_SERVICE-ca"
fi
# The names the apiserver and the members dial: each member's DNS name under the headless
# Service (the wildcard covers members added later), with and without .cluster.local;
# localhost and 127.0.0.1 for etcdctl inside the pod.
etcd_domain=$ETCD_SERVICE.$NAMESPACE.svc
etcd_names=
for suffix in "" .cluster.local; do
  for member in 0 1 2; do
    etcd_names+="DNS:$ETCD_STATEFULSET-$member.$etcd_domain$suffix, "
  done
  etcd_names+="DNS:*.$etcd_domain$suffix, DNS:$etcd_domain$suffix, "
done
etcd_names+="DNS:localhost, IP:127.0.0.1"
# etcd's HTTP gateway (/v3/* over HTTP/JSON) dials etcd's own gRPC server with the
# serving certificate, as a client (as kubeadm's etcd server certificate allows); a member
# dials its peers with the certificate it serves them with.
# The pod names exceed the 64 characters a CN may have; the SANs carry them.
issue etcd-server etcd-ca "$ETCD_SERVICE-server" "serverAuth, clientAuth" "$etcd_names"
issue etcd-peer etcd-ca "$ETCD_SERVICE-peer" "serverAuth, clientAuth" "$etcd_names"
issue etcd-client etcd-ca "$SERVICE" clientAuth "DNS:$SERVICE"

if [[ $dry_run == 1 ]]; then
  echo "Files in $dir: etcd-ca etcd-server etcd-peer etcd-client, and unless --etcd-only ca tls metrics-tls (.crt and .key each)" >&2
  if [[ $etcd_only == 0 ]]; then
    echo "caBundle:" >&2
    # -A: one line, the form a caBundle takes.
    openssl base64 -A -in "$dir/ca.crt"
    echo
  fi
  exit 0
fi

tls_secret "$ETCD_CA_SECRET" etcd-ca etcd-ca
tls_secret "$ETCD_SERVER_SECRET" etcd-server etcd-ca
tls_secret "$ETCD_PEER_SECRET" etcd-peer etcd-ca
tls_secret "$ETCD_CLIENT_SECRET" etcd-client etcd-ca
[[ $etcd_only == 0 ]] || exit 0

# ca.crt, as cert-manager writes it, is what clients such as Prometheus verify the apiserver with.
tls_secret "$SECRET" tls ca
tls_secret "$METRICS_SECRET" metrics-tls ca
ca_bundle=$(openssl base64 -A -in "$dir/ca.crt")
for apiservice in "${APISERVICES[@]}"; do
  "$KUBECTL" patch apiservice "$apiservice" --type merge \
    -p "{\"spec\":{\"caBundle\":\"$ca_bundle\"}}"
done
