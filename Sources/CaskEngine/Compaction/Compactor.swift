import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// One run of `CaskStore.compact()`: its steps (Docs/ARCHITECTURE.md, "Compaction"), in
/// order, and what they carry from one to the next. Made with the compaction lock held.
struct Compactor {
  let store: CaskStore
  /// The sealed segments when the run started, oldest first: every segment, when the active
  /// one was sealed for it; otherwise all but the active one, which is newer than each.
  let inputs: [Segment]
  /// The keys the outputs are sealed under: the current key epoch's when the run started.
  /// Records of inputs under an older epoch are sealed again under them (key and value).
  let cipher: RecordCipher
  var outputs: [OutputSegment] = []
  var copied: [CopiedRecord] = []
  var damaged: [DamagedRecord] = []
  var bytesBefore: UInt64 = 0
  /// The hint of the segment step 1 sealed, taken from the index under the writer lock: step 2
  /// reads that input's records from it instead of from its hint file, which is written on
  /// the hint queue meanwhile.
  let sealedHint: HintFile?

  /// A record copied into an output, and where it was.
  struct CopiedRecord {
    var key: IndexKey
    var from: RecordLocation
    var to: RecordLocation
    /// The attachment section the copy carries (empty for none).
    var attached: [UInt8] = []
  }

  /// A live record that failed its checks, left out.
  struct DamagedRecord {
    var key: IndexKey
    var location: RecordLocation
    var region: CorruptRegion
  }

  /// An output being written under its temporary name.
  struct OutputSegment {
    var segment: Segment
    var temporaryPath: String
    var finalPath: String
    var end: UInt64
    var hints: [HintEntry]
    var maxSequence: UInt64
  }

  /// Step 1: takes every sealed segment as an input, sealing the segment being written first
  /// when `sealingActive` (every existing segment is then an input).
  ///
  /// - Parameter sealingActive: whether to seal the active segment (`compact()`, and a
  ///   rotation of older key epochs), or leave it to the writer and compact the sealed
  ///   segments only (automatic compaction, as Bitcask merges only immutable files). It is
  ///   sealed anyway when a sealed segment's order base is not below its own (open resumes
  ///   only a segment the writer started, whose base is above every other, but a crafted
  ///   header may claim any order): outputs must sort between the inputs and it, and there
  ///   may be no order left there.
  /// - Returns: `nil` when there is nothing to compact (no input, or a single one without dead
  ///   bytes under the current key epoch).
  ///
  /// Little is done under the writer lock: the active segment is synced before it is taken
  /// (`syncActiveSegmentAhead`), and the sealed segment's hint is encoded, sealed and written
  /// on the hint queue. Prevents: every write waiting while the segment's unsynced bytes were
  /// written out and its hint encrypted and synced (0.2–0.38 s at 100,000 keys, in the
  /// middle of a run of deletes that set off an automatic compaction). Left unsealed, it costs
  /// the writer nothing but the lock taken to read which segment it is.
  init?(store: CaskStore, sealingActive: Bool = true) throws {
    if sealingActive {
      try store.syncActiveSegmentAhead()
    } else {
      // The hints of segments the writer sealed are on disk before they are read.
      store.hintQueue.drain()
    }
    let (inputs, cipher, sealedHint) = try store.writer.withLock { writer -> ([Segment], RecordCipher, HintFile?) in
      try writer.throwIfClosed()
      try writer.throwIfFailed()
      try store.state.withLock { try $0.throwIfDamaged() }
      let segments = store.state.withLock { Array($0.segments.values) }
      var sealedHint: HintFile?
      if let active = writer.active {
        let base = active.segment.order.base
        if sealingActive || segments.contains(where: { $0.id != active.segment.id && $0.order.base >= base }) {
          sealedHint = try store.seal(active, writer: &writer, hintInBackground: true)
        }
      }
      let writing = writer.active?.segment.id
      let inputs = segments.filter { $0.id != writing }.sorted { $0.order < $1.order }
      return (inputs, store.cipher, sealedHint)
    }
    let inputIDs = Set(inputs.map(\.id))
    guard !inputs.isEmpty,
      !(inputs.count == 1 && inputs[0].epoch == cipher.epoch
        && store.state.withLock({ $0.directory.usage(of: inputIDs.contains).dead == 0 }))
    else {
      return nil
    }
    self.store = store
    self.inputs = inputs
    self.cipher = cipher
    self.sealedHint = sealedHint
  }

  /// The newest input, whose order the outputs follow.
  var newestInput: Segment { inputs[inputs.count - 1] }

  /// Step 2: copies the records the index still points at, input by input, oldest first
  /// (giving up between inputs when the store is closing).
  mutating func copyLiveRecords() throws {
    for input in inputs {
      if store.background.isStopped { throw CaskError.closed }
      // Never past what 32-bit offsets reach (open reports any excess).
      let length = min(try input.file.size(), CaskFormat.maximumSegmentLength)
      bytesBefore += length
      let entries = try hintEntries(of: input, length: length)
      // Which of the segment's records are still current, in short lock holds.
      var live: [(IndexKey, RecordLocation)] = []
      for chunk in stride(from: 0, to: entries.count, by: CaskFormat.compactionIndexChunk) {
        let slice = entries[chunk..<min(chunk + CaskFormat.compactionIndexChunk, entries.count)]
        try store.state.withLock { state in
          for entry in slice where !entry.isDelete {
            let key = IndexKey(entry.key)
            let location = RecordLocation(segment: input.id, offset: entry.offset, length: entry.length)
            if state.directory[key] == location { live.append((key, location)) }
          }
          // A lookup that failed on a damaged checkpoint page would leave a live record behind.
          try state.throwIfDamaged()
        }
      }
      try copy(live, from: input)
    }
  }

  /// Step 3: makes the outputs durable, gives them hints, and puts them in place.
  func installOutputs() throws {
    // Version 5: a manifest naming the outputs as pending is on disk before any is in place,
    // so that open refuses an output no manifest names (one put back beside an older
    // manifest would bring back records deleted since, FORMAT.md section 6b).
    if store.keyRing.withLock({ $0.identity }) != nil {
      try store.writer.withLock { writer in _ = try store.writeManifest(&writer) }
    }
    for output in outputs {
      try output.segment.file.sync()
      try HintFile(
        segmentID: output.segment.id, segmentLength: output.end, maxSequence: output.maxSequence,
        entries: output.hints
      ).write(in: store.path, fileSystem: store.fileSystem, cipher: cipher)
      try store.fileSystem.rename(output.temporaryPath, to: output.finalPath)
    }
    try store.fileSystem.syncDirectory(store.path)
  }

  /// Undoes steps 2 and 3 after a failure: removes every output under either name, with its
  /// hint. An output left on disk but unknown to this store could bring back keys deleted
  /// later, so if the cleanup fails the store stops writing until it is reopened (open then
  /// knows every file).
  func removeOutputs() {
    do {
      for output in outputs {
        output.segment.file.close()
        try store.fileSystem.removeFile(output.temporaryPath)
        try store.fileSystem.removeFile(output.finalPath)
        try store.fileSystem.removeFile("\(store.path)/\(Segment.hintName(id: output.segment.id))")
      }
      try store.fileSystem.syncDirectory(store.path)
      // Gone for good: no longer pending (one that could not be removed stays named so).
      store.writer.withLock { writer in
        for output in outputs { writer.pendingOutputs[output.segment.id] = nil }
      }
    } catch let cleanup {
      store.writer.withLock { writer in
        writer.failure =
          writer.failure ?? CaskError.converting(cleanup, operation: "compaction cleanup", path: store.path)
      }
    }
  }

  /// Step 4: points the index at the copies, unless a writer replaced the key meanwhile, and
  /// drops the keys whose records were left out as damaged (if still at them).
  func repointIndex() {
    store.state.withLock { state in
      for output in outputs { state.segments[output.segment.id] = output.segment }
    }
    for chunk in stride(from: 0, to: copied.count, by: CaskFormat.compactionIndexChunk) {
      let slice = copied[chunk..<min(chunk + CaskFormat.compactionIndexChunk, copied.count)]
      store.state.withLock { state in
        for record in slice {
          let moved = state.directory.relocate(record.key, from: record.from, to: record.to)
          // Also with no section: the old place then no longer names an owner.
          if moved {
            IndexKey.withUTF8(of: record.key.string) { owner in
              record.attached.withUnsafeBytes {
                state.directory.relocateAttachments($0, owner: owner, from: record.from, to: record.to)
              }
            }
          }
        }
      }
    }
    store.state.withLock { state in
      for entry in damaged {
        // Keys attached to a record left out go with it (found by a walk: its section may
        // not have opened).
        if state.directory.carriesAttachments(entry.location), state.directory[entry.key] == entry.location {
          IndexKey.withUTF8(of: entry.key.string) {
            state.directory.dropAttachments(at: entry.location, owner: $0, section: nil)
          }
        }
        state.directory.drop(entry.key, ifAt: entry.location)
      }
    }
  }

  /// Step 5: removes the inputs, oldest first, each removal made durable before the next, and
  /// stops at the first failure: a newer segment (which may hold a tombstone) never goes while
  /// an older one (which may hold the value it deleted) stays. Inputs that could not be
  /// removed stay known to the store, entirely dead, so the next compaction removes them.
  func removeInputs() {
    // The sealed input's hint, queued in step 1, is written before the input goes. Prevents: a
    // hint written after its segment was removed, naming a segment no longer in the store.
    store.hintQueue.drain()
    var removed = 0
    for input in inputs {
      do {
        try store.fileSystem.removeFile("\(store.path)/\(Segment.hintName(id: input.id))")
        try store.fileSystem.removeFile("\(store.path)/\(Segment.fileName(id: input.id))")
        try store.fileSystem.syncDirectory(store.path)
        removed += 1
      } catch {
        break
      }
    }
    // Removed inputs need no more naming as retired; one still on disk stays retired, and the
    // next writable open removes it.
    store.writer.withLock { writer in
      for input in inputs.prefix(removed) { writer.retiredSegments.remove(input.id) }
    }
    store.state.withLock { state in
      for (position, input) in inputs.enumerated() {
        if position < removed {
          state.segments[input.id] = nil
          state.directory.forgetSegment(input.id)
        } else {
          state.directory.markDead(input.id)
        }
      }
      state.compactions += 1
    }
  }

  var report: CompactionReport {
    CompactionReport(
      inputSegments: inputs.count, outputSegments: outputs.count, recordsCopied: copied.count,
      bytesBefore: bytesBefore, bytesAfter: outputs.reduce(0) { $0 + $1.end }, damagedRecords: damaged.map(\.region))
  }
}
