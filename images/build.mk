# images: the sandbox images (python, nodejs), the daemon images (gateway,
# executor), the offline base, and the compose stack targets.
# `make images` builds every image (images/build-images.sh); IMAGES="python
# nodejs" builds a subset. SANDGATE_BASE_IMAGE overrides the base image.
IMAGES ?=
images:
	images/build-images.sh $(IMAGES)
