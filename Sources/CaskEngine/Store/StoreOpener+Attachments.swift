/// Replaying attached keys at open (Docs/FORMAT.md, "Version 5: attached keys"), from a scan,
/// a hint, or the log after a checkpoint: each put or delete of an owner first drops the keys
/// its current record attaches (read from that record, in a segment already indexed), then a put
/// adds its own record's.
extension CaskStore.IndexState {
  /// Applies one record (or hint entry) of segment `segment`, attached keys included.
  /// `onChange` is told of each attached key dropped or added, as for a write.
  mutating func apply(
    isDelete: Bool, key: UnsafeRawBufferPointer, attached: UnsafeRawBufferPointer, at location: RecordLocation,
    onChange: KeyDirectory.AttachedChange? = nil
  ) {
    let segments = self.segments
    let reader: KeyDirectory.SectionReader = { location, owner in
      segments[location.segment]?.attachedSection(at: location, owner: owner)
    }
    directory.dropAttachments(ofOwner: key, oldSection: reader, onChange: onChange)
    if isDelete {
      directory.applyDelete(keyBytes: key, at: location)
    } else {
      directory.applyPut(keyBytes: key, at: location)
      directory.attach(attached, owner: key, at: location, oldSection: reader, onChange: onChange)
    }
  }

  /// Whether the entries of `batch` need `apply` one by one: one carries attached keys, or a
  /// record indexed before carries some.
  mutating func needsAttachedReplay(_ batch: UnsafeBufferPointer<HintPayload.EntryView>) -> Bool {
    // Not learnt here: after a checkpoint that would load every page of its tables.
    return !directory.attachedOwnersKnown || !directory.attachedOwners.isEmpty
      || batch.contains { $0.attached.count > 0 }
  }
}
