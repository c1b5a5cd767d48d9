//! Flashing boards: bitstreams and firmware through the vendor tools, driven from build manifests.
