import CaskEngine
import CaskTestSupport
import CipherCask
import Foundation

/// `cask-crash-writer --streamed-import`: the victim of
/// Tests/CipherCaskTests/StreamedImportKillTests.swift.
///
/// Opens a store with `.always` durability, saves one object (`ack 0`), then imports a JSON
/// Lines file of `objects` objects with `importJSON(contentsOf:)` into the indexed collection
/// of CollectionWriter, printing `ack i` when the import's progress reports object i (read
/// and appended, not committed) and `ack objects+1` once the import returned (committed).
/// It then waits to be killed. The file's last line repeats the first id with other values,
/// which must win.
///
/// Usage: cask-crash-writer --streamed-import <store path> <password> <run> <objects> <segment size limit>
enum StreamedImportWriter {
  static func run(_ arguments: [String]) -> Never {
    guard arguments.count == 5, let run = Int(arguments[2]), let count = Int(arguments[3]), count > 1,
      let segmentLimit = UInt64(arguments[4])
    else {
      fail("usage: cask-crash-writer --streamed-import <store path> <password> <run> <objects> <segment size limit>")
    }
    do {
      let file = URL(fileURLWithPath: arguments[0] + ".run\(run).jsonl")
      let encoder = JSONEncoder()
      var text = Data()
      for item in StreamedImportObjects.make(run: run, count: count) {
        text.append(try encoder.encode(item))
        text.append(UInt8(ascii: "\n"))
      }
      try text.write(to: file)
      let options = CaskStore.Options(durability: .always, segmentSizeLimit: segmentLimit, autoCompaction: nil)
      let store = try CaskStore(path: arguments[0], password: arguments[1], options: options)
      let items = store.collection(
        CrashItem.self, named: StreamedImportObjects.collection, indexes: CollectionWriter.indexes)
      emit(CrashWriterLine.opened)
      try items.save(StreamedImportObjects.base(run: run))
      emit(CrashWriterLine.acknowledged(0))
      try items.importJSON(contentsOf: file) { progress in
        emit(CrashWriterLine.acknowledged(progress.objects))
      }
      emit(CrashWriterLine.acknowledged(count + 1))
      while true { sleep(1) }
    } catch {
      fail("\(error)")
    }
  }
}
