{{ inference_latencies() }}
