# SPDX-License-Identifier: LGPL-2.1-or-later
# make image: an OCI image of the static binaries (deploy/Containerfile,
# FROM scratch), built with buildah or podman (installed on Debian when
# neither is there, as bench/ does with its tools). IMAGE names it.
IMAGE ?= localhost/cgkilld:$(VERSION)
# What the image holds, as name:directory; each must be linked statically
# (a FROM scratch image has no loader), which make image checks.
IMAGE_BINS := cgkilld:usr/sbin cgkillctl:usr/sbin cgkill:usr/bin
IMAGE_ROOT := $(B)/image/rootfs

# The daemon is linked dynamically for the host; the image's statically.
$(B)/image/cgkilld: $(DAEMON_OBJ) $(B)/libcgkill.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(CGKILL_LDFLAGS) -o $@ $^ -lpthread
$(B)/image/%: $(B)/%
	@mkdir -p $(dir $@)
	cp $< $@

image-rootfs: $(foreach b,$(IMAGE_BINS),$(B)/image/$(firstword $(subst :, ,$(b))))
	rm -rf $(IMAGE_ROOT)
	install -d -m 755 $(IMAGE_ROOT)/etc/cgkill $(IMAGE_ROOT)/run $(IMAGE_ROOT)/usr/bin \
		$(IMAGE_ROOT)/usr/sbin $(IMAGE_ROOT)/proc $(IMAGE_ROOT)/sys $(IMAGE_ROOT)/dev
	@for b in $(IMAGE_BINS); do \
		f=$(B)/image/$${b%%:*}; \
		if readelf -lW $$f | grep -q 'Requesting program interpreter'; then \
			echo "make image: $$f is linked dynamically; a FROM scratch image needs it static (-static-pie)" >&2; \
			exit 1; \
		fi; \
		echo "install -m 755 -s $$f $(IMAGE_ROOT)/$${b#*:}/"; \
		install -m 755 -s $$f $(IMAGE_ROOT)/$${b#*:}/ || exit 1; \
	done

image: image-rootfs deploy/Containerfile
	@command -v buildah >/dev/null || command -v podman >/dev/null || { \
		echo "make image: installing buildah (apt-get)"; \
		apt-get install -y -qq buildah >/dev/null 2>&1 || \
		{ apt-get update -qq && apt-get install -y -qq buildah >/dev/null 2>&1; }; } || \
		{ echo "make image: needs buildah or podman" >&2; exit 1; }
	$(if $(shell command -v buildah),buildah bud,podman build) --layers=false -f deploy/Containerfile \
		-t $(IMAGE) $(B)/image

.PHONY: image image-rootfs
