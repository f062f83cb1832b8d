import json

def main(data):
    return json.dumps({"n": len(data), "k": sorted(data)})
