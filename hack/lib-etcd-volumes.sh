#!/usr/bin/env bash
# The local real node has no storage provisioner: etcd's volumes (one per member, and the
# backups') are hostPath PersistentVolumes under ${NODE_DIR}/volumes, made here as an
# administrator provisions local volumes. Sourced by hack/deploy-to-node.sh, and by the
# tests that stand in for a provisioner when a volume is lost or replaced.

# volume_dir NAME: the node directory behind the volume NAME.
volume_dir() { echo "${NODE_DIR}/volumes/$1"; }

# volume_pv NAME CLAIM SIZE: prepares the directory (etcd and the backup job run as 65532,
# and kubelet does not chown hostPath volumes) and prints the PersistentVolume NAME, bound
# ahead to the claim CLAIM of nginx-operator-system.
volume_pv() {
  local name="$1" claim="$2" size="$3" dir
  dir="$(volume_dir "${name}")"
  mkdir -p "${dir}" && chown 65532:65532 "${dir}" && chmod 0700 "${dir}"
  cat <<YAML
apiVersion: v1
kind: PersistentVolume
metadata:
  name: ${name}
  labels:
    app.kubernetes.io/part-of: nginx-operator
spec:
  capacity: {storage: ${size}}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  claimRef: {namespace: nginx-operator-system, name: ${claim}}
  hostPath: {path: ${dir}, type: Directory}
YAML
}

# member_pv MEMBER: the volume of etcd member MEMBER (the StatefulSet's claim data-<pod>).
member_pv() { volume_pv "nginx-operator-etcd-$1" "data-nginx-operator-etcd-$1" 1Gi; }

# backups_pv: the volume of the backup CronJob (components/etcd-backup).
backups_pv() { volume_pv nginx-operator-etcd-backups nginx-operator-etcd-backups 5Gi; }
