import Foundation
import RNCryptorCodec

extension Checkpoint {
  /// One page before it is sealed: what the root's order implies for it, and its contents.
  struct PagePlan: Equatable {
    var kind: UInt8
    var table: UInt32
    var count: UInt32
  }

  /// Where the writer closes a chunk of long keys and a sorted page. Any such limits give a
  /// file the reader takes (a chunk is at most `KeyArena.largestChunkLength` bytes); smaller
  /// ones only make the fuzz seeds' small stores span several pages.
  struct PageLimits {
    var chunk = KeyArena.largestChunkLength
    var sortedPage = CaskFormat.checkpointSortedPageTarget
  }

  /// Calls `body` with the page each table implies, in order, until it returns `false`: each
  /// table's slots (`CaskFormat.checkpointSlotsPerPage` to a page), then its chunks (one to a
  /// page; none for a sorted group, whose chunks are made again from its sorted pages). The
  /// sorted pages and the tombstone pages follow them. No array is built: open checks every
  /// page's length against its plan.
  func forEachTablePagePlan(_ body: (PagePlan) -> Bool) {
    for number in tables.indices {
      let table = tables[number]
      var left = table.capacity
      while left > 0 {
        let slots = min(left, UInt64(CaskFormat.checkpointSlotsPerPage))
        guard body(PagePlan(kind: CaskFormat.checkpointPageSlots, table: UInt32(number), count: UInt32(slots))) else {
          return
        }
        left -= slots
      }
      guard !Self.isSorted(name: table.name) else { continue }
      for length in table.chunkLengths {
        guard body(PagePlan(kind: CaskFormat.checkpointPageChunk, table: UInt32(number), count: length)) else { return }
      }
    }
  }

  /// How many pages `forEachTablePagePlan` hands out.
  var tablePageCount: Int {
    var count = 0
    for table in tables {
      count += Int(
        (table.capacity + UInt64(CaskFormat.checkpointSlotsPerPage) - 1) / UInt64(CaskFormat.checkpointSlotsPerPage))
      if !Self.isSorted(name: table.name) { count += table.chunkLengths.count }
    }
    return count
  }

  /// The whole file for `directory`'s tables (the ungrouped one, then each group's), the
  /// sorted groups' keys in order, and the covered segment's `tombstones`; the root's table, page and tombstone fields are filled
  /// in here.
  ///
  /// - Parameter nonce: the file's nonce; fresh random bytes unless given (the fuzz seeds fix it,
  ///   so that making them again gives the same bytes).
  /// - Throws: the directory's `damage` when a page of the checkpoint it was loaded from
  ///   fails as it is loaded here (every page is, through the same path as a lookup's).
  /// - Complexity: O(capacity of the tables), one encryption of each page (and one read and
  ///   decryption of each page of the previous checkpoint not loaded yet).
  func encoded(
    directory: KeyDirectory, tombstones: HintEntries, cipher: RecordCipher, limits: PageLimits = PageLimits(),
    nonce: Nonce? = nil
  ) throws -> [UInt8] {
    guard directory.loadAllPages() else {
      throw directory.damage
        ?? CaskError.corrupt(file: CaskFormat.checkpointFileName, offset: 0, reason: "a page failed")
    }
    var root = self
    root.hashKey = directory.hashKey
    root.tombstoneCount = UInt32(tombstones.count)
    let named =
      [(name: [UInt8](), table: directory.ungrouped)]
      + zip(directory.groups.names, directory.groups.tables).map { (Array($0.string.utf8), $1) }
    let images = named.map {
      CheckpointTableImage($0.1, sortedGroup: Self.isSorted(name: $0.0) ? $0.0 : nil, limits: limits)
    }
    root.tables = []
    for ((name, table), image) in zip(named, images) {
      let lengths = image.chunks.map { UInt32($0.length) }
      root.tables.append(
        TableEntry(
          name: name, capacity: UInt64(table.capacity), count: UInt64(table.count), arenaLive: UInt64(image.liveBytes),
          arenaDead: 0, arenaUsed: lengths.last ?? 0, chunkLengths: lengths))
    }
    root.pages = []
    root.nonce = try nonce ?? Nonce.random()
    var body: [UInt8] = []
    func seal(_ plan: PagePlan, _ contents: UnsafeRawBufferPointer) throws {
      var page = ByteWriter(capacity: CaskFormat.checkpointPageHeadLength + contents.count)
      page.append(CaskFormat.messageTagCheckpointPage)
      page.append(plan.kind)
      page.append(UInt16(0))
      page.append(UInt32(root.pages.count))
      page.append(plan.table)
      page.append(plan.count)
      page.append(root.nonce.first)
      page.append(root.nonce.second)
      page.append(contentsOf: contents)
      let message = try cipher.seal(Data(page.bytes))
      root.pages.append(PageReference(length: UInt32(message.count)))
      body.append(contentsOf: message)
    }
    for (number, (_, table)) in named.enumerated() {
      let image = images[number]
      var first = 0
      while first < table.capacity {
        let count = min(table.capacity - first, CaskFormat.checkpointSlotsPerPage)
        try image.slotPage(first: first, count: count).withUnsafeBytes {
          try seal(PagePlan(kind: CaskFormat.checkpointPageSlots, table: UInt32(number), count: UInt32(count)), $0)
        }
        first += count
      }
      for chunk in image.chunks where !Self.isSorted(name: named[number].0) {
        try chunk.contents.withUnsafeBytes {
          try seal(
            PagePlan(kind: CaskFormat.checkpointPageChunk, table: UInt32(number), count: UInt32(chunk.length)), $0)
        }
      }
    }
    for (number, (name, _)) in named.enumerated() where Self.isSorted(name: name) {
      var entries: [SortedPageEntry] = []
      for sorted in images[number].sortedPages {
        try sorted.contents.withUnsafeBytes {
          try seal(
            PagePlan(kind: CaskFormat.checkpointPageSorted, table: UInt32(number), count: UInt32(sorted.count)), $0)
        }
        entries.append(SortedPageEntry(count: UInt32(sorted.count), firstKey: sorted.firstKey))
      }
      root.sortedGroups.append(
        SortedGroupEntry(
          table: UInt32(number), pages: entries, chunkStarts: images[number].chunkStarts.map { UInt32($0) }))
    }
    var page = ByteWriter(capacity: CaskFormat.checkpointPageTarget + 1024)
    var count: UInt32 = 0
    func closeTombstones() throws {
      guard count > 0 else { return }
      try page.bytes.withUnsafeBytes {
        try seal(PagePlan(kind: CaskFormat.checkpointPageTombstones, table: 0, count: count), $0)
      }
      page = ByteWriter(capacity: CaskFormat.checkpointPageTarget + 1024)
      count = 0
    }
    try tombstones.forEachEntry { _, offset, length, key in
      if page.bytes.count + CaskFormat.hintEntryFixedLength + key.count > CaskFormat.checkpointPageTarget {
        try closeTombstones()
      }
      page.append(CaskFormat.recordTypeDelete)
      page.append(UInt8(0))
      page.append(UInt16(key.count))
      page.append(offset)
      page.append(length)
      page.append(contentsOf: key)
      count += 1
    }
    try closeTombstones()
    let sealedRoot = Array(try cipher.seal(Data(root.encodedRoot())))
    var file = ByteWriter(capacity: CaskFormat.checkpointHeadLength + sealedRoot.count + body.count)
    file.append(contentsOf: CaskFormat.checkpointMagic)
    file.append(UInt32(sealedRoot.count))
    file.append(contentsOf: sealedRoot)
    file.append(contentsOf: body)
    return file.bytes
  }
}
