extension FaultyDisk {
  /// What power loss leaves: for every directory, its durable entries plus a random prefix of
  /// the changes made since its last `syncDirectory`; for every file still reachable, its
  /// durable bytes plus a random prefix of the writes made since its last `sync()`, the first
  /// write left out possibly torn (a random prefix of its bytes lands). Everything in the
  /// result is durable; no lock is held.
  func survivor(using random: inout SeededRandom) -> FaultyDisk {
    rebuilt(
      entries: { node in
        var entries = node.durableEntries
        let kept = Self.survivingCount(of: node.pendingEntries.count, using: &random)
        for change in node.pendingEntries.prefix(kept) { Self.apply(change, to: &entries) }
        return entries
      },
      contents: { node in
        var data = node.durable
        let kept = Self.survivingCount(of: node.pending.count, using: &random)
        for change in node.pending.prefix(kept) { Self.apply(change, to: &data) }
        if kept < node.pending.count, case .write(let offset, let bytes) = node.pending[kept], bytes.count > 1,
          random.next() % 2 == 0
        {
          let cut = 1 + Int(random.next() % UInt64(bytes.count - 1))
          Self.apply(.write(offset: offset, bytes: Array(bytes[0..<cut])), to: &data)
        }
        return data
      })
  }

  /// Only what was made durable: the worst a crash can do.
  func durableOnly() -> FaultyDisk {
    rebuilt(entries: { $0.durableEntries }, contents: { $0.durable })
  }

  /// Everything as it is now, all of it durable: a clean shutdown.
  func snapshot() -> FaultyDisk {
    rebuilt(entries: { $0.entries }, contents: { $0.data })
  }

  /// Whether nothing is pending (every file synced, every directory synced) and no lock is
  /// held: then the disk is its own clean-shutdown image.
  var isClean: Bool {
    locks.isEmpty && inodes.values.allSatisfy { $0.pending.isEmpty && $0.pendingEntries.isEmpty }
  }

  /// A clean disk's image without rebuilding it (see `isClean`): its inodes, sharing storage
  /// with this disk until either changes, and none of its power state, faults, limits or
  /// counters. Prevents: a template directory rebuilt inode by inode for every fuzz input.
  func cleanCopy() -> FaultyDisk {
    var copy = FaultyDisk()
    copy.inodes = inodes
    copy.nextInode = nextInode
    return copy
  }

  /// How many of `total` pending changes survive: none, all, or any number in between.
  private static func survivingCount(of total: Int, using random: inout SeededRandom) -> Int {
    guard total > 0 else { return 0 }
    switch random.next() % 4 {
    case 0: return 0
    case 1: return total
    default: return Int(random.next() % UInt64(total + 1))
    }
  }

  /// A new disk holding what is reachable from the root through `entries`, with file bytes
  /// from `contents`. Names are visited in sorted order so a seed replays the same crash.
  private func rebuilt(entries: (Inode) -> [String: Int], contents: (Inode) -> [UInt8]) -> FaultyDisk {
    var result = FaultyDisk()
    var copies: [Int: Int] = [Self.root: Self.root]
    var queue = [Self.root]
    while let old = queue.popLast() {
      guard let node = inodes[old], let directory = copies[old] else { continue }
      let names = entries(node)
      for name in names.keys.sorted() {
        guard let child = names[name], let childNode = inodes[child] else { continue }
        let copy: Int
        if let existing = copies[child] {
          copy = existing
        } else {
          copy = result.makeInode(directory: childNode.isDirectory)
          copies[child] = copy
          if childNode.isDirectory {
            queue.append(child)
          } else {
            let bytes = contents(childNode)
            result.inodes[copy]!.data = bytes
            result.inodes[copy]!.durable = bytes
          }
        }
        result.inodes[directory]!.entries[name] = copy
        result.inodes[directory]!.durableEntries[name] = copy
        result.inodes[copy]!.links += 1
      }
    }
    return result
  }
}
