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

  /// Applies a scanned segment's records in order. With `keepingEntries` (the last segment,
  /// appended to after open) returns them, each followed by the attached keys it took off the
  /// record it replaced as deletes of length 0 at its offset (Docs/FORMAT.md, section 6), as
  /// the writer notes them. Prevents: the segment's next hint, which lists only the records the
  /// index then points at and the deletes kept here, leaving out the record that dropped a key,
  /// so that a key it had taken over from an earlier record of its own came back.
  mutating func apply(scanned entries: [HintEntry], segment: UInt32, keepingEntries: Bool) -> [HintEntry] {
    var detached = DetachedKeys()
    var kept: [HintEntry] = []
    for entry in entries {
      let location = RecordLocation(segment: segment, offset: entry.offset, length: entry.length)
      IndexKey.withUTF8(of: entry.key) { key in
        entry.attached.withUnsafeBytes {
          apply(isDelete: entry.isDelete, key: key, attached: $0, at: location) { key, added, _ in
            if keepingEntries { detached.note(key, added: added) }
          }
        }
      }
      guard keepingEntries else { continue }
      kept.append(entry)
      for key in detached.take() {
        kept.append(
          HintEntry(isDelete: true, offset: entry.offset, length: 0, key: String(decoding: key, as: UTF8.self)))
      }
    }
    return kept
  }
}
