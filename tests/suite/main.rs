mod foundation;
