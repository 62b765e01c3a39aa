def build_report():
    pass
