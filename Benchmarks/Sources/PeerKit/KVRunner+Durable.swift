import Foundation

extension KVRunner {
  /// Durable puts: `writers` threads share `puts` puts of distinct keys into a fresh store
  /// opened with `.always`; the rate is all puts over the wall time.
  public static func durable(
    opener: any StoreOpener, request: PeerRequest, progress: (String) -> Void
  ) throws -> PeerReport {
    let harnessRSS = ProcessFigures.currentRSS()
    let durablePuts = [1: request.durablePuts1 ?? 300, 8: request.durablePuts8 ?? 800]
    let most = durablePuts.values.max() ?? 0
    let data = WorkloadData(keys: most, seed: request.seed)
    var recorder = Recorder(capacity: most)
    let counts = durablePuts.keys.sorted()
    for run in 1...Swift.max(1, request.runs) {
      for writers in counts {
        let puts = durablePuts[writers] ?? 0
        progress("\(opener.name): durable puts, \(writers) writers, run \(run) of \(request.runs)")
        let path = try request.freshDirectory("durable")
        let store = try opener.open(directory: path, durability: .always)
        let share = puts / writers
        var (seconds, samples) = try timedOnThreads(writers, perThread: share) { thread, index in
          try store.put(data.value(thread * share + index), forKey: data.keys[thread * share + index])
        }
        recorder.add(
          writers == 1 ? KVWorkload.durable1 : KVWorkload.durable8, operations: share * writers, seconds: seconds,
          samples: &samples, note: "\(writers) writer thread(s), every put synced before it returns")
        try store.close()
        try FileManager.default.removeItem(atPath: path)
      }
    }
    return PeerReport(
      engine: opener.name, setup: opener.setup, mode: "durable", keys: most, durability: .always,
      runs: request.runs, workloads: recorder.figures, peakRSSBytes: ProcessFigures.peakRSS(),
      harnessRSSBytes: harnessRSS)
  }
}
