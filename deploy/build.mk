# deploy: sandgate on an existing cluster engine.
#   make swarm-up    on a swarm manager: secrets and configs from build/swarm
#                    and policies/, docker stack deploy -c deploy/swarm/stack.yml,
#                    wait for /readyz (SANDGATE_PORT, default 9385; images must
#                    be on every node: SANDGATE_TAG / SANDGATE_*_IMAGE pick them)
#                    SANDGATE_LABEL_NODE=1 labels a single node as a sandbox host
#   make swarm-down  docker stack rm (services, networks, secrets, configs) and
#                    the sandbox containers the executors left on this node
#   make k8s-check   structural check of deploy/kubernetes/*.yaml (offline)
swarm-up:
	deploy/swarm/swarm.sh up

swarm-down:
	deploy/swarm/swarm.sh down

k8s-check:
	python3 deploy/kubernetes/check.py deploy/kubernetes/*.yaml

.PHONY: swarm-up swarm-down k8s-check
