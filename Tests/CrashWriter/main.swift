// cask-crash-writer: the victim of Tests/CaskEngineTests/CrashRecoveryTests.swift.
//
// Opens a store (`.always` durability in even runs, `.never` in odd ones: a kill of the
// process alone must lose nothing acknowledged under either) and performs the
// `CrashWorkload` stream of `(seed, run)` until it is killed, printing
// `CrashWriterLine.acknowledged(i)` after operation i returned. The test kills it with SIGKILL and checks that every acknowledged
// operation survived. Used only by the tests; not a product.
//
// Usage: cask-crash-writer <store path> <password> <seed> <run> <segment size limit> [max operations]
//        cask-crash-writer --collection <store path> <password> <seed> <run> <segment size limit>
//                                                   (CollectionWriter.swift: a collection with indexes)
//        cask-crash-writer --streamed-import <store path> <password> <run> <objects> <segment size limit>
//                                                   (StreamedImportWriter.swift: one import, killed mid-way)
//        cask-crash-writer --no-spare-descriptor <directory>   (NoSpareDescriptor.swift)
//        cask-crash-writer --sigbus-chain <directory> [--own-handler]   (SigbusChain.swift)

import CaskEngine
import CaskTestSupport
import Foundation

/// Writes one line with a single `write(2)`: nothing sits in a buffer when the kill comes.
func emit(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("Error: \(message)\n".utf8))
  exit(1)
}

let arguments = CommandLine.arguments
if arguments.count == 3 && arguments[1] == "--no-spare-descriptor" {
  exit(NoSpareDescriptor.run(in: arguments[2]).rawValue)
}
if arguments.count >= 3 && arguments[1] == "--sigbus-chain" {
  SigbusChain.run(in: arguments[2], ownHandler: arguments.count == 4 && arguments[3] == "--own-handler")
}
if arguments.count >= 2 && arguments[1] == "--collection" {
  CollectionWriter.run(Array(arguments.dropFirst(2)))
}
if arguments.count >= 2 && arguments[1] == "--streamed-import" {
  StreamedImportWriter.run(Array(arguments.dropFirst(2)))
}
guard arguments.count == 6 || arguments.count == 7,
  let seed = UInt64(arguments[3]), let run = Int(arguments[4]), let segmentLimit = UInt64(arguments[5])
else {
  fail("usage: cask-crash-writer <store path> <password> <seed> <run> <segment size limit> [max operations]")
}
let maximumOperations = arguments.count == 7 ? Int(arguments[6]) ?? 0 : 100_000

do {
  // Automatic compaction with low thresholds, so that kills also land in background compactions.
  let options = CaskStore.Options(
    durability: run % 2 == 0 ? .always : .never, segmentSizeLimit: segmentLimit,
    autoCompaction: CaskStore.AutoCompaction(deadRatio: 0.3, minimumDeadBytes: 8 << 10))
  let store = try CaskStore(path: arguments[1], password: arguments[2], options: options)
  emit(CrashWriterLine.opened)
  var workload = CrashWorkload(seed: seed, run: run)
  while workload.index < maximumOperations {
    let index = workload.index
    switch workload.next() {
    case .put(let key, let value):
      try store.put(value, forKey: key)
    case .delete(let key):
      try store.delete(key)
    case .batch(let steps):
      try store.batch { batch in
        for step in steps {
          switch step {
          case .put(let key, let value): try batch.put(value, forKey: key)
          case .delete(let key): try batch.delete(key)
          }
        }
      }
    case .compact:
      try store.compact()
    }
    emit(CrashWriterLine.acknowledged(index))
  }
  try store.close()
} catch {
  fail("\(error)")
}
