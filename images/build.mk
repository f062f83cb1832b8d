# images: the sandbox images (python, nodejs), the daemon images (gateway,
# executor), the offline base, and the compose stack targets.
#   make images   every image (images/build-images.sh); IMAGES="python nodejs"
#                 builds a subset; SANDGATE_BASE_IMAGE overrides the base
#   make up       as root from a bare clone: deps, host setup, images, stack;
#                 waits for /readyz and prints a working curl example
#   make down     removes what `make up` started (containers, sandboxes,
#                 networks, volumes); build/stack (tokens, audit log) stays
#   make reload   reload the running gateway's policies and tokens (inside its
#                 container: the restart policy stays on)
#   make demo     a few real jobs against the running stack
IMAGES ?=
images:
	images/build-images.sh $(IMAGES)

up:
	@if [ "$$(id -u)" = 0 ]; then \
	    $(MAKE) --no-print-directory deps && images/host-setup.sh --fix; \
	else \
	    echo "up: not root: skipping 'make deps' and host repairs"; images/host-setup.sh --check; \
	fi
	$(MAKE) --no-print-directory images
	images/stack.sh up

down:
	images/stack.sh down

reload:
	images/stack.sh reload

demo:
	python3 images/demo.py

include images/nodejs/build.mk
include images/runtime/build.mk
