{{ inference_responses() }}
