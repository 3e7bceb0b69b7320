import Foundation

extension Manifest {
  /// The manifest describing `segments` (the active one by its end, the others by their
  /// file's size) as the writer state has them.
  static func describing(
    _ segments: [Segment], active: CaskStore.ActiveSegment?, writer: CaskStore.WriterState, retired: [UInt32]
  ) throws -> Manifest {
    var entries: [Entry] = []
    for segment in segments.sorted(by: { ($0.order, $0.id) < ($1.order, $1.id) }) {
      let isActive = active?.segment.id == segment.id
      let length = isActive ? active?.end ?? 0 : min(try segment.file.size(), CaskFormat.maximumSegmentLength)
      entries.append(Entry(id: segment.id, order: segment.order, isActive: isActive, length: length))
    }
    return Manifest(
      generation: writer.manifestGeneration + 1, lastSequence: writer.nextSequence - 1,
      nextSegmentID: writer.nextSegmentID, segments: entries, retired: retired,
      pending: writer.pendingOutputs.sorted())
  }

  /// Writes the manifest into the store directory `path` atomically (temporary file, sync,
  /// rename, directory sync).
  func write(in path: String, fileSystem: any FileSystem, cipher: RecordCipher) throws {
    try AtomicFile.write(
      encoded(cipher: cipher), to: "\(path)/\(CaskFormat.manifestFileName)", fileSystem: fileSystem,
      syncingDirectory: path)
  }
}

extension CaskStore {
  /// Rewrites the manifest (version 3 stores; nothing before) for the state under the writer
  /// lock: at seal, after a compaction's outputs are in place, at close. Segments in
  /// `writer.retiredSegments` are left out of the list and named as retired.
  ///
  /// - Parameters:
  ///   - retiring: segments a compaction replaced, retired from this manifest on; if it
  ///     cannot be written they are not.
  func writeManifest(_ writer: inout WriterState, retiring: [UInt32] = []) throws {
    guard cipher.bindsRecords, !options.readOnly else { return }
    let before = writer.retiredSegments
    writer.retiredSegments.formUnion(retiring)
    do {
      let retired = writer.retiredSegments
      let segments = state.withLock { Array($0.segments.values) }.filter { !retired.contains($0.id) }
      let manifest = try Manifest.describing(
        segments, active: writer.active, writer: writer, retired: retired.sorted())
      try manifest.write(in: path, fileSystem: fileSystem, cipher: cipher)
      writer.manifestGeneration = manifest.generation
    } catch {
      writer.retiredSegments = before
      throw error
    }
  }
}
